"""Tests of the Python package: scikit-learn conventions, dense and sparse input, pickling,
errors, Ctrl-C, the GIL, and agreement with the Rust library (through the `gimc` command
line, whose path is $GIMC_BIN)."""

import copy
import os
import pickle
import signal
import subprocess
import threading
import time

import joblib
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import make_classification, make_multilabel_classification

import gimc
from gimc import GIMCClassifier, _gimc


@pytest.fixture(scope="module")
def multilabel():
    X, Y = make_multilabel_classification(
        n_samples=500, n_features=25, n_classes=8, random_state=0
    )
    return X[:400], Y[:400], X[400:], Y[400:]


@pytest.fixture(scope="module")
def multiclass():
    X, y = make_classification(
        n_samples=500, n_features=10, n_informative=6, n_classes=3, random_state=1
    )
    names = np.array(["cat", "dog", "eel"])
    return X[:350], names[y[:350]], X[350:], names[y[350:]]


def small(**kw):
    """A small GIMC-LFF estimator (the fixed-map path; ``auto`` has its own tests)."""
    params = dict(map="lff", m=60, max_iter=4, random_state=3)
    params.update(kw)
    return GIMCClassifier(**params)


def test_sklearn_conventions(multiclass):
    X, y, _, _ = multiclass
    clf = small(alpha=[0.1, 1.0])
    assert clf.get_params()["m"] == 60
    assert clf.set_params(map="rff") is clf and clf.map == "rff"
    cloned = clone(clf)
    assert cloned.get_params() == clf.get_params()
    assert not hasattr(cloned, "model_bytes_")
    assert clf.fit(X, y) is clf
    for attr in ("classes_", "n_features_in_", "best_params_", "n_iter_", "gamma_", "model_bytes_"):
        assert hasattr(clf, attr)
    assert clf.best_params_["alpha"] in (0.1, 1.0)
    assert clf.n_iter_ == 0  # a fixed map has no outer iterations
    assert list(clf.classes_) == ["cat", "dog", "eel"]


def test_learned_map_beats_chance_and_top_k_is_consistent(multiclass):
    X, y, Xt, yt = multiclass
    clf = small().fit(X, y)
    acc = clf.score(Xt, yt)
    assert acc > 0.7, acc
    top = clf.predict_top_k(Xt, 2)
    assert top.shape == (len(Xt), 2)
    assert np.array_equal(top[:, 0], clf.predict(Xt))
    scores = clf.decision_function(Xt)
    assert scores.shape == (len(Xt), 3)
    assert np.array_equal(clf.classes_[np.argmax(scores, axis=1)], clf.predict(Xt))


def test_default_gamma_is_the_scale_rule_on_the_standardised_features(multiclass):
    X, y, _, _ = multiclass
    clf = small(max_iter=0).fit(X, y)
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    assert clf.gamma_ == pytest.approx(1.0 / (Z.shape[1] * Z.var()), rel=1e-9)
    half = small(max_iter=0, gamma="0.5*scale").fit(X, y)
    assert half.gamma_ == pytest.approx(0.5 * clf.gamma_, rel=1e-12)
    fixed = small(max_iter=0, gamma=0.05).fit(X, y)
    assert fixed.gamma_ == 0.05


def test_sparse_input_gives_the_same_model_as_dense(multilabel):
    X, Y, Xt, Yt = multilabel
    dense = small(standardize=False).fit(X, Y)
    sparse = small(standardize=False).fit(sp.csr_matrix(X), sp.csc_matrix(Y))
    assert dense.best_params_ == sparse.best_params_
    a = dense.decision_function(Xt)
    b = sparse.decision_function(sp.csr_matrix(Xt))
    assert np.allclose(a, b, rtol=1e-10, atol=1e-12)
    pred = sparse.predict(sp.csr_matrix(Xt))
    assert sp.issparse(pred)  # sparse training labels give sparse predictions
    assert np.array_equal(pred.toarray(), dense.predict(Xt))


def test_sparse_features_are_read_in_place_not_copied(multilabel):
    X, Y, Xt, _ = multilabel
    # int64 indices (scipy's choice for large matrices): all three arrays are read in place
    X64 = sp.csr_matrix(X)
    X64.indptr = X64.indptr.astype(np.int64)
    X64.indices = X64.indices.astype(np.int64)
    assert X64.indices.dtype == np.int64
    addresses = _gimc.sparse_buffer_addresses(gimc._convert.features(X64))
    own = (X64.indptr.ctypes.data, X64.indices.ctypes.data, X64.data.ctypes.data)
    assert addresses == own
    # int32 indices are widened once on the Python side; the values are still not copied
    X32 = sp.csr_matrix(X)
    assert X32.indices.dtype == np.int32
    addresses = _gimc.sparse_buffer_addresses(gimc._convert.features(X32))
    assert addresses[2] == X32.data.ctypes.data
    assert addresses[1] != X32.indices.ctypes.data
    assert _gimc.sparse_buffer_addresses(X) is None
    # scikit-learn's validation in fit / predict (validate_data) copies nothing either
    checked = gimc._convert.checked_features(small(), X64, reset=True)
    assert _gimc.sparse_buffer_addresses(checked) == own
    # a fit reads the arrays in place on its worker thread and lets go of them afterwards
    clf = small(standardize=False).fit(X64, Y)
    ref = small(standardize=False).fit(X32.copy(), Y)
    Xt = sp.csr_matrix(Xt)
    assert np.array_equal(clf.decision_function(Xt), ref.decision_function(Xt))
    del X64
    import gc

    gc.collect()
    assert np.array_equal(clf.decision_function(Xt), ref.decision_function(Xt))


def test_broken_csr_tuples_are_python_errors():
    indptr = np.array([0, 1, 2], dtype=np.int64)
    indices = np.array([0, 1], dtype=np.int64)
    data = np.array([1.0, 2.0])
    assert _gimc.gamma_scale((indptr, indices, data, 2, 2)) > 0
    with pytest.raises(ValueError, match="negative column index -1"):
        _gimc.gamma_scale((indptr, np.array([0, -1], dtype=np.int64), data, 2, 2))
    with pytest.raises(ValueError, match="invalid CSR matrix 2 x 1"):
        _gimc.gamma_scale((indptr, indices, data, 2, 1))
    with pytest.raises(ValueError, match="invalid CSR matrix 3 x 2"):
        _gimc.gamma_scale((indptr, indices, data, 3, 2))
    with pytest.raises(ValueError, match="contiguous"):
        _gimc.gamma_scale((indptr, indices, np.array([1.0, 0.0, 2.0, 0.0])[::2], 2, 2))
    with pytest.raises(TypeError, match="indices"):
        _gimc.gamma_scale((indptr, indices.astype(np.int32), data, 2, 2))
    with pytest.raises(ValueError, match="non-finite"):
        _gimc.gamma_scale((indptr, indices, np.array([1.0, np.inf]), 2, 2))


def test_streamed_fit_equals_the_whole_fit_and_float32_stays_close(multilabel):
    X, Y, Xt, Yt = multilabel
    whole = small(standardize=False, storage="whole").fit(X, Y)
    assert not whole.streamed_
    streamed = small(standardize=False, storage="streamed", block_rows=37).fit(X, Y)
    assert streamed.streamed_
    assert streamed.best_params_ == whole.best_params_
    a = whole.decision_function(Xt)
    assert np.allclose(streamed.decision_function(Xt), a, rtol=1e-8, atol=1e-10)
    f32 = small(standardize=False, precision="float32", block_rows=37).fit(X, Y)
    assert f32.streamed_  # float32 implies streaming under "auto"
    assert np.max(np.abs(f32.decision_function(Xt) - a)) < 1e-3 * np.max(np.abs(a))
    assert not small(standardize=False).fit(X, Y).streamed_  # auto: this fits in memory
    with pytest.raises(ValueError, match="storage"):
        small(storage="disk").fit(X, Y)
    with pytest.raises(ValueError, match="precision"):
        small(precision="float16").fit(X, Y)
    with pytest.raises(ValueError, match="streamed"):
        small(storage="whole", precision="float32").fit(X, Y)
    with pytest.raises(ValueError, match="block_rows"):
        small(block_rows=0).fit(X, Y)


def test_multilabel_score_is_precision_at_1(multilabel):
    X, Y, Xt, Yt = multilabel
    clf = small(normalize="l2").fit(X, Y)
    scores = clf.decision_function(Xt)
    top1 = np.argmax(scores, axis=1)
    expected = np.mean(Yt[np.arange(len(Yt)), top1])
    assert clf.score(Xt, Yt) == pytest.approx(expected)
    assert clf.score(Xt, Yt) > 0.6


def test_metrics_match_a_numpy_reference():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(40, 9))
    truth = (rng.random((40, 9)) < 0.3).astype(int)
    for k in (1, 3, 5):
        top = np.argsort(-scores, axis=1)[:, :k]
        p = np.mean(np.take_along_axis(truth, top, axis=1).sum(axis=1) / k)
        assert gimc.metrics.precision_at_k(truth, scores, k) == pytest.approx(p)
        disc = 1.0 / np.log2(np.arange(2, k + 2))
        dcg = (np.take_along_axis(truth, top, axis=1) * disc).sum(axis=1)
        ideal = np.array([disc[: min(k, t)].sum() for t in truth.sum(axis=1)])
        ok = ideal > 0
        nd = np.where(ok, dcg / np.where(ok, ideal, 1), 0.0).mean()
        assert gimc.metrics.ndcg_at_k(sp.csr_matrix(truth), scores, k) == pytest.approx(nd)
    with pytest.raises(ValueError):
        gimc.metrics.precision_at_k(truth[:, :5], scores, 1)


def test_pickle_deepcopy_and_joblib_keep_the_model(multilabel, tmp_path):
    X, Y, Xt, _ = multilabel
    clf = small().fit(X, Y)
    want = clf.decision_function(Xt)
    for other in (
        pickle.loads(pickle.dumps(clf)),
        copy.deepcopy(clf),
    ):
        assert np.array_equal(other.decision_function(Xt), want)
    path = tmp_path / "clf.joblib"
    joblib.dump(clf, path)
    assert np.array_equal(joblib.load(path).decision_function(Xt), want)
    info = _gimc.model_info(clf.model_bytes_)
    assert info["method"] == "gimc-lff" and info["n_labels"] == Y.shape[1]


def test_bad_input_raises_python_errors(multiclass):
    X, y, _, _ = multiclass
    bad = X.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        small().fit(bad, y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        small().fit(X, y[:-1])
    with pytest.raises(ValueError, match="map"):
        small(map="nope").fit(X, y)
    with pytest.raises(ValueError, match="gamma"):
        small(gamma="-2").fit(X, y)
    with pytest.raises(ValueError, match="n_iter_no_change"):
        small(n_iter_no_change=0).fit(X, y)
    with pytest.raises(ValueError, match="could not convert string to float"):
        small().fit(np.array([["a", "b"]] * 10), np.arange(10) % 2)
    with pytest.raises(ValueError, match="Complex data not supported"):
        small().fit(X + 1j, y)
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        small().fit(X, np.linspace(0, 1, len(y)))
    with pytest.raises(ValueError, match="2-D y must be a 0/1 label indicator"):
        small().fit(X, np.tile(np.arange(len(y)) % 3, (2, 1)).T)
    clf = small().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :5])


def _cli_model(X, classes, tmp_path, *args):
    """``gimc fit`` (seed 3) with ``args`` on ``X`` / ``classes`` written as CSV; the model
    file's bytes. Skips without ``GIMC_BIN``."""
    gimc_bin = os.environ.get("GIMC_BIN")
    if not gimc_bin:
        pytest.skip("GIMC_BIN (the gimc command line) not set")
    csv = tmp_path / "train.csv"
    with open(csv, "w") as f:
        f.write(",".join(f"x{j}" for j in range(X.shape[1])) + ",class\n")
        for row, c in zip(X, classes):
            f.write(",".join(repr(float(v)) for v in row) + f",{c}\n")
    model = tmp_path / "cli.gimc"
    subprocess.run(
        [gimc_bin, "-q", "--seed", "3", "--label-column", "last", "fit", str(csv), *args,
         "-o", str(model)],
        check=True,
    )
    return model.read_bytes()


def _cli_decision(X, classes, Xt, tmp_path, *options):
    """``gimc fit`` (seed 3, GIMC-LFF, m = 60) on ``X`` / ``classes`` written as CSV, with
    ``options``; the CLI model's decision function on ``Xt``. Skips without ``GIMC_BIN``."""
    model = _cli_model(X, classes, tmp_path, "--method", "gimc-lff", "--m", "60", *options)
    return _gimc.decision_function(model, np.asarray(Xt, dtype=np.float64))


def test_same_model_as_the_rust_library_for_the_same_seed(multiclass, tmp_path):
    X, y, Xt, _ = multiclass
    classes = np.unique(y, return_inverse=True)[1]
    cli = _cli_decision(X, classes, Xt, tmp_path, "--iters", "4")
    clf = small().fit(X, classes)
    assert np.array_equal(cli, clf.decision_function(Xt))


def test_n_iter_no_change_is_the_cli_patience(multiclass, tmp_path):
    # a patience never reached changes nothing; a short one stops early (here at the start),
    # and gives the model of the CLI's --patience
    X, y, Xt, _ = multiclass
    classes = np.unique(y, return_inverse=True)[1]
    full = small(max_iter=10, alpha=[0.01, 1.0]).fit(X, classes)
    never = small(max_iter=10, alpha=[0.01, 1.0], n_iter_no_change=10).fit(X, classes)
    assert np.array_equal(full.decision_function(Xt), never.decision_function(Xt))
    short = small(max_iter=10, alpha=[0.01, 1.0], n_iter_no_change=1).fit(X, classes)
    assert short.n_iter_ < full.n_iter_
    cli = _cli_decision(
        X, classes, Xt, tmp_path, "--iters", "10", "--lambda", "0.01,1", "--patience", "1"
    )
    assert np.array_equal(cli, short.decision_function(Xt))


def test_fixed_maps_keep_their_defaults(multiclass):
    # m, gamma and alpha default to None, which a fixed map reads as 500, "scale" and 1.0, and
    # normalize="auto" as no row normalisation: the model of the explicit values
    X, y, Xt, _ = multiclass
    default = GIMCClassifier(map="rff", random_state=0).fit(X, y)
    explicit = GIMCClassifier(
        map="rff", m=500, gamma="scale", alpha=1.0, normalize=None, random_state=0
    ).fit(X, y)
    assert default.best_params_ == explicit.best_params_
    assert default.best_params_["m"] == 500 and default.best_params_["alpha"] == 1.0
    assert np.array_equal(default.decision_function(Xt), explicit.decision_function(Xt))
    info = _gimc.model_info(default.model_bytes_)
    assert info["method"] == "imc-rff" and info["normalize"] == "none" and info["standardized"]


def _auto_trials_hold(trials, **expected):
    """Whether the trials of ``search_results_`` have exactly the given sets of ``stages``,
    ``transforms``, ``alphas`` and ``factors`` (the scale-rule factors of their map blocks,
    None for a fixed γ)."""
    maps = [b for t in trials for b in t["blocks"] if b["gamma"] is not None]
    got = {
        "stages": {t["stage"] for t in trials},
        "transforms": {t["transform"] for t in trials},
        "alphas": {t["alpha"] for t in trials},
        "factors": {b["gamma_factor"] for b in maps},
    }
    return {k: got[k] for k in expected} == expected


def test_auto_is_the_default_and_reports_its_search(multilabel):
    X, Y, Xt, Yt = multilabel
    assert GIMCClassifier().map == "auto"
    params = GIMCClassifier().get_params()
    assert [params[k] for k in ("m", "gamma", "alpha", "normalize", "n_iter_no_change")] == [
        None, None, None, "auto", None
    ]
    clf = GIMCClassifier(m=40, random_state=0).fit(X, Y)
    best, trials = clf.best_params_, clf.search_results_
    assert set(best) == {"stage", "transform", "blocks", "alpha", "validation_score"}
    assert best in trials
    assert all(set(t) == set(best) for t in trials)
    for b in best["blocks"]:
        assert set(b) == {"name", "gamma", "gamma_factor", "iterations"}
    # the default search: raw and L2 rows (tf-idf needs sparse features), the linear part,
    # lff and lnys along five multiples of the scale rule walked from the rule itself, five λ
    assert _auto_trials_hold(trials, transforms={"raw", "l2"})
    factors = {b["gamma_factor"] for t in trials for b in t["blocks"] if b["gamma"] is not None}
    assert 1.0 in factors and len(factors) >= 2 and factors <= {0.0625, 0.25, 1.0, 4.0, 16.0}
    assert {"linear", "lff", "lnys"} <= {b["name"] for t in trials for b in t["blocks"]}
    assert {t["alpha"] for t in trials} <= {0.001, 0.01, 0.1, 1.0, 10.0}
    assert {t["stage"] for t in trials} >= {"fixed", "combined"}
    # the chosen setting is the best one scored (a learned one replaces it only by beating it)
    if best["stage"] != "learned":
        assert best["validation_score"] == max(t["validation_score"] for t in trials)
    assert clf.validation_score_ == best["validation_score"]
    assert clf.n_iter_ == max(b["iterations"] for b in best["blocks"])
    assert clf.gamma_ == [b["gamma"] for b in best["blocks"] if b["gamma"] is not None]
    assert clf.constant_columns_.tolist() == [] and not clf.streamed_
    assert clf.score(Xt, Yt) > 0.6
    info = _gimc.model_info(clf.model_bytes_)
    assert info["method"] == "gimc-auto" and info["n_features_in"] == X.shape[1]
    # a pickled estimator predicts through the same model file and input transform
    assert np.array_equal(
        pickle.loads(pickle.dumps(clf)).decision_function(Xt), clf.decision_function(Xt)
    )


def test_auto_parameters_narrow_its_search(multiclass):
    X, y, Xt, _ = multiclass
    narrow = GIMCClassifier(
        m=30, gamma=[0.05, "0.5*scale"], alpha=0.5, normalize="l2", max_iter=0, random_state=0
    ).fit(X, y)
    trials = narrow.search_results_
    assert _auto_trials_hold(
        trials, stages={"fixed", "combined"}, transforms={"l2"}, alphas={0.5}, factors={None, 0.5}
    )
    assert {b["gamma"] for t in trials for b in t["blocks"] if b["gamma_factor"] is None} >= {0.05}
    assert narrow.n_iter_ == 0  # max_iter=0: the maps keep their random draw
    raw = GIMCClassifier(m=30, normalize=None, max_iter=0, random_state=0).fit(X, y)
    assert _auto_trials_hold(raw.search_results_, transforms={"raw"})
    assert {t["alpha"] for t in raw.search_results_} <= {0.001, 0.01, 0.1, 1.0, 10.0}
    for bad, match in (
        (dict(m=[20, 40]), "one m"),
        (dict(standardize=False), "standardize"),
        (dict(storage="whole"), "storage"),
        (dict(precision="float32"), "precision"),
        (dict(normalize="l1"), "normalize"),
        (dict(alpha=0.0), "lambda"),
        (dict(n_iter_no_change=0), "n_iter_no_change"),
    ):
        with pytest.raises(ValueError, match=match):
            GIMCClassifier(**bad).fit(X, y)


def test_auto_tries_tf_idf_on_sparse_counts_and_drops_constant_columns(multilabel):
    X, Y, Xt, _ = multilabel  # word counts: non-negative
    Xc = np.c_[X, np.full(len(X), 2.0), np.zeros(len(X))]  # a constant and a zero column
    Xtc = np.c_[Xt, np.full(len(Xt), 7.0), np.ones(len(Xt))]  # other values there: ignored
    sparse = GIMCClassifier(m=40, max_iter=2, random_state=1).fit(sp.csr_matrix(Xc), Y)
    assert _auto_trials_hold(sparse.search_results_, transforms={"raw", "l2", "tfidf-l2"})
    assert sparse.constant_columns_.tolist() == [X.shape[1], X.shape[1] + 1]
    info = _gimc.model_info(sparse.model_bytes_)
    assert info["columns"] == list(range(X.shape[1])) and info["n_features_in"] == X.shape[1] + 2
    assert sparse.n_features_in_ == X.shape[1] + 2
    # the stored transform drops the constant columns of new rows, whatever they hold
    on_sparse = sparse.decision_function(sp.csr_matrix(Xtc))
    assert np.array_equal(on_sparse, sparse.decision_function(np.c_[Xt, np.zeros((len(Xt), 2))]))
    # without the constant columns, the same search and model
    plain = GIMCClassifier(m=40, max_iter=2, random_state=1).fit(sp.csr_matrix(X), Y)
    assert plain.search_results_ == sparse.search_results_
    assert np.array_equal(plain.decision_function(sp.csr_matrix(Xt)), on_sparse)
    with pytest.raises(ValueError, match="features"):
        sparse.predict(Xt)  # the raw width is checked


def test_auto_equals_gimc_fit_for_the_same_seed(multiclass, tmp_path):
    # gimc fit's default method is auto; the estimator's parameters are its flags
    X, y, Xt, _ = multiclass
    classes = np.unique(y, return_inverse=True)[1]
    X = np.c_[X[:, :4], np.full(len(X), 3.0), X[:, 4:]]  # a constant column, dropped by both
    Xt = np.c_[Xt[:, :4], np.full(len(Xt), 3.0), Xt[:, 4:]]
    clf = GIMCClassifier(m=40, random_state=3).fit(X, classes)
    cli = _cli_model(X, classes, tmp_path, "--m", "40")
    assert np.array_equal(_gimc.decision_function(cli, Xt), clf.decision_function(Xt))
    assert clf.constant_columns_.tolist() == [4]
    narrow = dict(gamma=[0.05, "scale"], alpha=[0.1, 1.0], m=40, max_iter=3, normalize="l2",
                  n_iter_no_change=1)
    clf = GIMCClassifier(random_state=3, **narrow).fit(X, classes)
    cli = _cli_model(X, classes, tmp_path, "--gamma", "0.05,scale", "--lambda", "0.1,1", "--m",
                     "40", "--iters", "3", "--normalize", "l2", "--patience", "1")
    assert np.array_equal(_gimc.decision_function(cli, Xt), clf.decision_function(Xt))
    raw = GIMCClassifier(random_state=3, m=40, normalize=None, max_iter=0).fit(X, classes)
    cli = _cli_model(X, classes, tmp_path, "--m", "40", "--normalize", "none", "--iters", "0")
    assert np.array_equal(_gimc.decision_function(cli, Xt), raw.decision_function(Xt))


def test_every_estimator_defaults_to_the_command_lines_seed(multiclass):
    # random_state defaults to 0, gimc's default --seed: two default fits give the same model
    # bytes, and None still draws a seed
    from gimc import (InductiveMatrixCompletion, LinearClassifier, MatrixCompletion,
                      MC1Transducer, OKMF, SemiSupervisedClustering)

    for est in (GIMCClassifier, LinearClassifier, SemiSupervisedClustering, OKMF,
                MC1Transducer, MatrixCompletion, InductiveMatrixCompletion):
        assert est().get_params()["random_state"] == 0, est.__name__
    X, y, _, _ = multiclass
    a = GIMCClassifier(m=30, max_iter=2).fit(X, y)
    b = GIMCClassifier(m=30, max_iter=2).fit(X, y)
    assert a.model_bytes_ == b.model_bytes_
    assert a.model_bytes_ == GIMCClassifier(m=30, max_iter=2, random_state=0).fit(X, y).model_bytes_


def test_fit_releases_the_gil():
    X, y = make_classification(n_samples=4000, n_features=40, random_state=0)
    ticks = []
    done = threading.Event()

    def fit():
        GIMCClassifier(map="lff", m=300, max_iter=8, random_state=0, n_jobs=1).fit(X, y)
        done.set()

    t = threading.Thread(target=fit)
    t.start()
    while not done.is_set():
        ticks.append(time.perf_counter())
        time.sleep(0.001)
    t.join()
    # the main thread kept running Python code while the fit ran
    assert len(ticks) > 20, len(ticks)


def test_n_jobs_is_bounded_by_the_machine(multiclass):
    # at most 4 threads per core (and 1024), as `gimc --threads`: no pool of 100000 threads
    X, y, _, _ = multiclass
    clf = GIMCClassifier(map="lff", m=20, max_iter=0, random_state=0, n_jobs=100000)
    with pytest.raises(ValueError, match=r"n_jobs: 100000 is more than the \d+ allowed"):
        clf.fit(X, y)
    assert not hasattr(clf, "model_bytes_")


@pytest.fixture
def sigint():
    """Python's own SIGINT handler for the test, whatever the runner inherited: a shell that
    starts the suite as a background job starts it with SIGINT ignored, Python then installs
    no handler, and a Ctrl-C would reach nothing to interrupt."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def _assert_interrupted(fit, after, within):
    """Sends SIGINT `after` seconds into `fit()` and asserts that it raises KeyboardInterrupt
    less than `within` seconds after its start."""
    timer = threading.Timer(after, lambda: os.kill(os.getpid(), signal.SIGINT))
    start = time.perf_counter()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        fit()
    timer.cancel()
    elapsed = time.perf_counter() - start
    assert elapsed < within, elapsed


def test_ctrl_c_interrupts_a_long_fit(sigint):
    X, y = make_classification(n_samples=20000, n_features=40, random_state=0)
    clf = GIMCClassifier(map="lff", m=[400, 800], alpha=[0.1, 1.0], max_iter=60, random_state=0)
    _assert_interrupted(lambda: clf.fit(X, y), after=1.0, within=15)
    assert not hasattr(clf, "model_bytes_")


def test_ctrl_c_interrupts_an_auto_fit(sigint):
    # the search checks for a signal after each row transform and every map-learning iteration
    X, y = make_classification(n_samples=20000, n_features=40, random_state=0)
    clf = GIMCClassifier(random_state=0)  # about 23 s uninterrupted on two cores
    _assert_interrupted(lambda: clf.fit(X, y), after=1.0, within=15)
    assert not hasattr(clf, "model_bytes_")


def _rings(n, seed):
    rng = np.random.default_rng(seed)
    t = rng.uniform(0, 2 * np.pi, n)
    cls = (np.arange(n) % 2).astype(int)
    r = np.where(cls == 0, 1.0, 3.0) + 0.1 * rng.normal(size=n)
    X = np.c_[r * np.cos(t), r * np.sin(t)]
    i, j = rng.integers(0, n, size=(2, 6 * n))
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    keep = lo != hi
    uniq = np.unique(np.c_[lo[keep], hi[keep]], axis=0)  # distinct unordered pairs
    i, j = uniq[:, 0], uniq[:, 1]
    pairs = np.c_[i, j, (cls[i] == cls[j]).astype(float)]
    return X, cls, pairs


def test_semisupervised_clustering_separates_rings_and_matches_the_cli(tmp_path):
    from gimc import SemiSupervisedClustering

    X, cls, pairs = _rings(300, 0)
    est = SemiSupervisedClustering(n_clusters=2, m=50, max_iter=5, random_state=4)
    labels = est.fit_predict(X, pairs)
    assert labels.shape == (300,)
    agree = max(np.mean(labels == cls), np.mean(labels != cls))
    assert agree > 0.95, agree
    assert set(est.best_params_) == {"alpha", "iterations", "gamma"}
    with pytest.raises(ValueError, match="constraints must be real"):
        clone(est).fit(X, pairs + 0j)
    with pytest.raises(ValueError, match="shape"):
        clone(est).fit(X, pairs[:, :2])
    gimc_bin = os.environ.get("GIMC_BIN")
    if not gimc_bin:
        pytest.skip("GIMC_BIN (the gimc command line) not set")
    data = tmp_path / "rings.csv"
    with open(data, "w") as f:
        f.write("x,y,class\n")
        for (a, b), c in zip(X, cls):
            f.write(f"{float(a)!r},{float(b)!r},{c}\n")
    cons = tmp_path / "pairs.txt"
    with open(cons, "w") as f:
        for i, j, s in pairs:
            f.write(f"{int(i)} {int(j)} {int(s)}\n")
    out = subprocess.run(
        [gimc_bin, "-q", "--json", "--seed", "4", "--label-column", "last", "cluster", str(data),
         "-k", "2", "--method", "gimc-lff", "--m", "50", "--iters", "5", "--constraints", str(cons)],
        check=True, capture_output=True, text=True,
    )
    import json

    assert np.array_equal(np.array(json.loads(out.stdout)["assignments"]), labels)


def _write_completion_files(tmp_path, X, Y, entries, hi, hj):
    """The command line's inputs of a completion task: feature CSVs, the observed triplets and
    the entries to predict (exact decimal round trips)."""
    xf, yf, tf, af = (tmp_path / n for n in ("X.csv", "Y.csv", "obs.txt", "ask.txt"))
    np.savetxt(xf, X, delimiter=",", fmt="%.17g")
    np.savetxt(yf, Y, delimiter=",", fmt="%.17g")
    with open(tf, "w") as f:
        for i, j, v in entries:
            f.write(f"{int(i)} {int(j)} {float(v)!r}\n")
    with open(af, "w") as f:
        for i, j in zip(hi, hj):
            f.write(f"{i} {j}\n")
    return xf, yf, tf, af


def _low_rank_with_features(seed=0):
    rng = np.random.default_rng(seed)
    X, Y = rng.normal(size=(60, 4)), rng.normal(size=(45, 4))
    A, B = rng.normal(size=(4, 2)), rng.normal(size=(4, 2))
    Z = X @ A @ (Y @ B).T
    mask = rng.random(Z.shape) < 0.4
    i, j = np.nonzero(mask)
    return X, Y, Z, np.c_[i, j, Z[i, j]], np.nonzero(~mask)


def test_inductive_matrix_completion_recovers_and_generalises(tmp_path):
    from gimc import InductiveMatrixCompletion

    X, Y, Z, entries, (hi, hj) = _low_rank_with_features()
    est = InductiveMatrixCompletion(rank=2, alpha=1e-4, max_iter=50, random_state=5)
    assert est.fit(X, Y, entries) is est
    pred = est.predict(hi, hj)
    rel = np.linalg.norm(pred - Z[hi, hj]) / np.linalg.norm(Z[hi, hj])
    assert rel < 0.05, rel
    # new rows predicted from their features alone
    Xn = np.random.default_rng(9).normal(size=(5, 4))
    direct = est.predict(np.repeat(np.arange(5), 45), np.tile(np.arange(45), 5), X=Xn)
    assert np.allclose(direct, ((Xn @ est.W_) @ (Y @ est.H_).T).ravel())
    # sparse features give the same model up to the CG tolerance (their products sum in
    # another order)
    sparse = InductiveMatrixCompletion(rank=2, alpha=1e-4, max_iter=50, random_state=5).fit(
        sp.csr_matrix(X), sp.csr_matrix(Y), entries
    )
    other = sparse.predict(hi, hj)
    assert np.linalg.norm(other - pred) / np.linalg.norm(pred) < 1e-5
    with pytest.raises(ValueError):
        est.predict([0], [999])
    gimc_bin = os.environ.get("GIMC_BIN")
    if not gimc_bin:
        pytest.skip("GIMC_BIN (the gimc command line) not set")
    xf, yf, tf, af = _write_completion_files(tmp_path, X, Y, entries, hi, hj)
    out = subprocess.run(
        [gimc_bin, "-q", "--seed", "5", "complete", str(tf), "--method", "imc", "--row-features",
         str(xf), "--col-features", str(yf), "--rank", "2", "--lambda", "0.0001", "--iters", "50",
         "--entries", str(af)],
        check=True, capture_output=True, text=True,
    )
    # after the line `# gimc predictions: kind=values`, one `i j value` line per entry
    cli = np.array([float(l.split()[2]) for l in out.stdout.splitlines() if not l.startswith("#")])
    assert np.allclose(cli, pred, rtol=1e-9, atol=1e-12)


def test_okmf_clusters_blobs_predicts_new_rows_and_matches_the_cli(tmp_path):
    from sklearn.datasets import make_blobs

    from gimc import OKMF

    X, y = make_blobs(n_samples=600, centers=3, n_features=5, random_state=0)
    est = OKMF(n_clusters=3, budget_size=60, random_state=2)
    labels = est.fit_predict(X)
    from sklearn.metrics import adjusted_rand_score

    assert adjusted_rand_score(y, labels) > 0.9
    assert np.array_equal(est.predict(X), labels)
    assert np.array_equal(pickle.loads(pickle.dumps(est)).predict(X[:50]), labels[:50])
    gimc_bin = os.environ.get("GIMC_BIN")
    if not gimc_bin:
        pytest.skip("GIMC_BIN (the gimc command line) not set")
    data = tmp_path / "blobs.csv"
    with open(data, "w") as f:
        f.write(",".join(f"x{j}" for j in range(5)) + ",class\n")
        for row, c in zip(X, y):
            f.write(",".join(repr(float(v)) for v in row) + f",{c}\n")
    out = subprocess.run(
        [gimc_bin, "-q", "--json", "--seed", "2", "--label-column", "last", "cluster", str(data),
         "-k", "3", "--method", "okmf", "--m", "60"],
        check=True, capture_output=True, text=True,
    )
    import json

    assert np.array_equal(np.array(json.loads(out.stdout)["assignments"]), labels)


def test_ctrl_c_interrupts_a_long_completion_fit(sigint):
    from gimc import InductiveMatrixCompletion

    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(3000, 100)), rng.normal(size=(3000, 100))
    idx = np.unique(rng.integers(0, 3000 * 3000, 200000))
    entries = np.c_[idx // 3000, idx % 3000, rng.normal(size=len(idx))]
    # a λ grid of six fits and the refit: about 7 s uninterrupted
    grid = [1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3]
    est = InductiveMatrixCompletion(rank=20, alpha=grid, max_iter=2000, random_state=0)
    _assert_interrupted(lambda: est.fit(X, Y, entries), after=0.5, within=3)
    assert not hasattr(est, "W_")


@pytest.mark.parametrize("method", ["mc-als", "mc-nuclear", "imc-nuclear", "pu-imc"])
def test_matrix_completion_methods_match_gimc_complete(method, tmp_path):
    from gimc import MatrixCompletion

    X, Y, Z, entries, (hi, hj) = _low_rank_with_features(1)
    features = method in ("imc-nuclear", "pu-imc")
    pu = method == "pu-imc"
    alpha = [1.0, 0.01, 0.0001] if not pu else [0.1, 1.0]
    rho = [0.2, 0.6] if pu else 0.5
    est = MatrixCompletion(method=method, rank=2, alpha=alpha, rho=rho, max_iter=30, random_state=6)
    est.fit(X if features else None, Y if features else None, entries, shape=Z.shape)
    pred = est.predict(hi, hj)
    if pu:
        # (alpha, rho) by held-out AUC, the first best of the grid
        assert set(est.holdout_auc_) == {(a, r) for a in alpha for r in rho}
        best = max(est.holdout_auc_.values())
        first = next(k for k, v in est.holdout_auc_.items() if v == best)
        assert (est.alpha_, est.rho_) == first
    else:
        assert set(est.holdout_rmse_) == set(alpha)
        assert est.alpha_ == min(est.holdout_rmse_, key=est.holdout_rmse_.get)
    if method != "pu-imc":
        rel = np.linalg.norm(pred - Z[hi, hj]) / np.linalg.norm(Z[hi, hj])
        assert rel < (0.05 if method == "imc-nuclear" else 0.6), rel
    gimc_bin = os.environ.get("GIMC_BIN")
    if not gimc_bin:
        pytest.skip("GIMC_BIN (the gimc command line) not set")
    xf, yf, tf, af = _write_completion_files(tmp_path, X, Y, entries, hi, hj)
    args = [gimc_bin, "-q", "--json", "--seed", "6", "complete", str(tf), "--method", method,
            "--rank", "2", "--iters", "30", "--lambda", ",".join(str(a) for a in alpha),
            "--entries", str(af)]
    if features:
        args += ["--row-features", str(xf), "--col-features", str(yf)]
    if pu:
        args += ["--rho", ",".join(str(r) for r in rho)]
    import json

    out = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    assert out["lambda"] == est.alpha_
    if pu:
        assert out["rho"] == est.rho_
    cli = np.array([t[2] for t in out["predictions"]])
    assert np.allclose(cli, pred, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("method", ["gimc-lff", "imc-nys"])
def test_gimc_matrix_completion_matches_gimc_complete(method, tmp_path):
    """MatrixCompletion(method="gimc-lff" | "imc-nys") chooses (m, γ, λ) and the iteration
    count on held-out entries as `gimc complete` does (one library function), predicts new
    rows from their features, pickles, and equals the command line."""
    import json
    import pickle

    from gimc import MatrixCompletion

    X, Y, Z, entries, (hi, hj) = _low_rank_with_features(2)
    est = MatrixCompletion(method=method, rank=2, alpha=[0.01, 1.0], m=[20, 40],
                           gamma=["scale", "0.5*scale"], max_iter=4, learn="rows",
                           random_state=4)
    assert est.fit(X, Y, entries) is est
    assert len(est.holdout_errors_) == 8
    best = min(err for _, err in est.holdout_errors_.values())
    assert est.holdout_error_ == best
    assert (est.m_, est.gamma_, est.alpha_) == next(
        k for k, (_, err) in est.holdout_errors_.items() if err == best)
    pred = est.predict(hi, hj)
    base = np.linalg.norm(Z[hi, hj] - Z[hi, hj].mean()) / np.linalg.norm(Z[hi, hj])
    rel = np.linalg.norm(pred - Z[hi, hj]) / np.linalg.norm(Z[hi, hj])
    assert rel < base, (rel, base)
    # the training rows given as new features reproduce the training predictions
    again = est.predict(hi, hj, X=X, Y=Y)
    assert np.allclose(again, pred, rtol=1e-12, atol=1e-12)
    clone = pickle.loads(pickle.dumps(est))
    assert np.array_equal(clone.predict(hi, hj, X=X), est.predict(hi, hj, X=X))
    with pytest.raises(ValueError, match="needs row and column features"):
        MatrixCompletion(method=method).fit(None, Y, entries, shape=Z.shape)
    gimc_bin = os.environ.get("GIMC_BIN")
    if not gimc_bin:
        pytest.skip("GIMC_BIN (the gimc command line) not set")
    xf, yf, tf, af = _write_completion_files(tmp_path, X, Y, entries, hi, hj)
    args = [gimc_bin, "-q", "--json", "--seed", "4", "complete", str(tf), "--method", method,
            "--rank", "2", "--iters", "4", "--lambda", "0.01,1", "--m", "20,40",
            "--gamma", "scale,0.5*scale", "--learn", "rows", "--entries", str(af),
            "--row-features", str(xf), "--col-features", str(yf)]
    out = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    cli = np.array([t[2] for t in out["predictions"]])
    assert np.allclose(cli, pred, rtol=1e-12, atol=1e-14), np.max(np.abs(cli - pred))


def test_gimc_matrix_completion_patience_cuts_each_trajectory():
    """n_iter_no_change stops each grid point's map learning: its held-out error is the
    minimum over a prefix of the trajectory the unstopped fit follows, never lower, and the
    same wherever the chosen iteration is; bad values raise ValueError."""
    from gimc import MatrixCompletion

    X, Y, _, entries, _ = _low_rank_with_features(2)
    # half the entries with noise, wide maps and a small alpha: some held-out errors stall
    entries = entries[::2].copy()
    entries[:, 2] += np.random.default_rng(0).normal(size=len(entries))
    kw = dict(method="gimc-lff", rank=4, alpha=[1e-5, 1e-3], m=[80, 160], gamma="3*scale",
              max_iter=20, random_state=4)
    whole = MatrixCompletion(**kw).fit(X, Y, entries).holdout_errors_
    cut = MatrixCompletion(n_iter_no_change=1, **kw).fit(X, Y, entries).holdout_errors_
    assert set(whole) == set(cut) and len(cut) == 4
    assert whole != cut, whole
    for key, (wi, we) in whole.items():
        ci, ce = cut[key]
        assert ci <= wi and ce >= we, (key, whole[key], cut[key])
        if ci == wi:
            assert ce == we
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="n_iter_no_change"):
            MatrixCompletion(n_iter_no_change=bad, **kw).fit(X, Y, entries)


def test_mc1_transducer_matches_gimc_transduce_on_hidden_emotions_cells(tmp_path):
    from gimc import MC1Transducer

    data_dir = os.environ.get("GIMC_DATA")
    gimc_bin = os.environ.get("GIMC_BIN")
    if not data_dir or not gimc_bin:
        pytest.skip("GIMC_DATA and GIMC_BIN not set")
    here = os.path.dirname(__file__)
    script = os.path.join(here, "..", "..", "..", "scripts", "hide_cells.py")
    src = os.path.join(data_dir, "emotions", "emotions.arff")
    out, truth = tmp_path / "emo-x.arff", tmp_path / "truth.txt"
    subprocess.run(["python3", script, src, "6", str(out), str(truth)], check=True)
    import shutil

    shutil.copy(os.path.join(data_dir, "emotions", "emotions.xml"), tmp_path / "emo-x.xml")
    import json

    cli = json.loads(
        subprocess.run(
            [gimc_bin, "-q", "--json", "transduce", str(out), "--folds", "3", "--lambda", "0.1,1"],
            check=True, capture_output=True, text=True,
        ).stdout
    )
    # the same table in Python: NaN for `?` features, NaN label rows for the hidden ones
    rows = [l for l in open(out).read().split("@data")[1].split("\n") if l.strip()]
    cells = [r.split(",") for r in rows]
    X = np.array([[np.nan if v == "?" else float(v) for v in c[:-6]] for c in cells])
    Y = np.array([[np.nan if v == "?" else float(v) for v in c[-6:]] for c in cells])
    est = MC1Transducer(alpha=[0.1, 1.0], folds=3, random_state=0)
    imputed = est.fit_transform(X, Y)
    assert list(est.unlabeled_) == cli["rows"]
    assert est.alpha_ == cli["lambda"] and est.mu_ == cli["mu"]
    assert np.allclose(est.decision_[est.unlabeled_], np.array(cli["scores"]), rtol=1e-9, atol=1e-12)
    known = ~np.isnan(X)
    assert np.array_equal(imputed[known], X[known]) and not np.isnan(imputed).any()
    hidden = {int(l.split()[0]): [int(v) for v in l.split()[1:]] for l in open(truth)}
    pred = est.predict()
    err = np.mean([pred[k, j] != hidden[r][j] for k, r in enumerate(est.unlabeled_) for j in range(6)])
    assert err < 0.25, err


def test_mc1_transducer_classes_with_minus_one_rows():
    from gimc import MC1Transducer

    rng = np.random.default_rng(0)
    n = 150
    cls = np.arange(n) % 3
    X = np.eye(3)[cls] @ rng.normal(size=(3, 6)) * 3 + 0.1 * rng.normal(size=(n, 6))
    X[rng.random(X.shape) < 0.15] = np.nan
    names = np.array(["a", "b", "c"])
    y = names[cls].astype(object)
    y[::5] = -1
    y = np.where(y == -1, "-1", y)
    est = MC1Transducer(alpha=[0.1, 1.0], folds=3, mu_count=4, random_state=1).fit(X, y)
    assert np.mean(est.predict() == names[cls[::5]]) > 0.9
    base = MC1Transducer(method="mean-svm", folds=3, random_state=1).fit(X, y)
    assert np.mean(base.predict() == names[cls[::5]]) > 0.9
    assert base.svm_c_.shape == (3,) and np.isnan(base.alpha_)
    with pytest.raises(ValueError, match="method"):
        MC1Transducer(method="nope").fit(X, y)


def test_ctrl_c_interrupts_semisupervised_clustering(sigint):
    from gimc import SemiSupervisedClustering

    rng = np.random.default_rng(0)
    n = 3000
    X = rng.normal(size=(n, 20))
    cls = (X[:, 0] > 0).astype(int)
    i, j = rng.integers(0, n, (2, 60000))
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    u = np.unique(np.c_[lo[lo != hi], hi[lo != hi]], axis=0)
    pairs = np.c_[u, (cls[u[:, 0]] == cls[u[:, 1]]).astype(float)]
    est = SemiSupervisedClustering(n_clusters=2, m=300, max_iter=30, alpha=[0.1], random_state=0)
    # uninterrupted this fit takes minutes; it stops after the IMC start of the running fit
    _assert_interrupted(lambda: est.fit(X, pairs), after=1.5, within=20)
    assert not hasattr(est, "labels_")


def test_ctrl_c_interrupts_okmf_at_the_end_of_an_epoch(sigint):
    from gimc import OKMF

    X = np.random.default_rng(0).normal(size=(200000, 20))
    est = OKMF(n_clusters=5, budget_size=500, epochs=40, random_state=0)  # ~40 s whole
    _assert_interrupted(lambda: est.fit(X), after=1.5, within=8)
    assert not hasattr(est, "labels_")
