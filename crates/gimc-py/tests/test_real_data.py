"""The Python package on real sets (Bibtex and emotions, from $GIMC_DATA): the same P@k as the
command line ($GIMC_BIN) for the same settings and seed, with a learned Fourier map and with the
default `auto` search, the data read as the command line reads it, and a scikit-learn pipeline
inside GridSearchCV. A missing set skips its tests, or fails them under GIMC_REQUIRE_DATA=1."""

import json
import os
import subprocess

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from gimc import GIMCClassifier
from gimc.datasets import load_dataset, load_file
from gimc.metrics import precision_at_k


def _data_dir(name="bibtex"):
    """$GIMC_DATA when it holds the set ``name``; else the test is skipped, or fails under
    GIMC_REQUIRE_DATA=1 (as in CI)."""
    data_dir = os.environ.get("GIMC_DATA")
    if data_dir and os.path.isdir(os.path.join(data_dir, name)):
        return data_dir
    if os.environ.get("GIMC_REQUIRE_DATA") == "1":
        pytest.fail(f"GIMC_REQUIRE_DATA=1 but {name}/ is not in GIMC_DATA={data_dir!r}")
    pytest.skip(f"GIMC_DATA (holding {name}/) not set")


@pytest.fixture(scope="module")
def bibtex():
    data_dir = _data_dir()
    train = load_dataset("bibtex", "train", data_dir=data_dir)
    test = load_dataset("bibtex", "test", data_dir=data_dir)
    return train, test


def test_bibtex_is_read_as_the_command_line_reads_it(bibtex):
    train, test = bibtex
    X, Y = train.data, train.target
    # the Mulan split's published sizes: 4,880 / 2,515 rows, 1,836 features, 159 labels
    assert sp.issparse(X) and X.shape == (4880, 1836) and test.data.shape == (2515, 1836)
    assert sp.issparse(Y) and Y.shape == (4880, 159) and train.target_kind == "labels"
    assert set(np.unique(Y.data)) == {1} and Y.sum() > 4880  # multi-label: >1 label per row on average
    assert len(train.target_names) == 159 and len(train.feature_names) == 1836
    # the file path gives the same matrices as the set name
    path = os.path.join(_data_dir(), "bibtex", "bibtex-train.arff")
    Xf, Yf = load_file(path, return_X_y=True)
    assert (Xf != X).nnz == 0 and (Yf != Y).nnz == 0


def test_loading_errors_are_python_errors(tmp_path):
    with pytest.raises(ValueError, match="no-such-set"):
        load_dataset("no-such-set", data_dir=str(tmp_path))
    with pytest.raises(ValueError, match="bibtex"):
        load_dataset("bibtex", "train", data_dir=str(tmp_path))  # names the missing file
    bad = tmp_path / "bad.svm"
    bad.write_text("1 1:0.5 2:x\n")
    with pytest.raises(ValueError, match="bad.svm"):
        load_file(bad)


_TOY_ARFF = (
    "@relation toy\n@attribute f0 numeric\n@attribute f1 numeric\n"
    "@attribute a {0,1}\n@attribute b {0,1}\n@data\n"
    "0.5,1.5,1,0\n1.0,0.5,0,1\n2.0,2.5,1,1\n"
)
_TOY_XML = (
    '<?xml version="1.0"?>\n<labels xmlns="http://mulan.sourceforge.net/labels">\n'
    '<label name="a"></label>\n<label name="b"></label>\n</labels>\n'
)


def test_load_file_finds_or_takes_the_mulan_label_file(tmp_path):
    arff = tmp_path / "toy-train-sparse.arff"
    arff.write_text(_TOY_ARFF)
    # no label file: a Weka ARFF whose last attribute is the class
    assert load_file(arff).target_kind == "classes"
    # named with labels=, from another folder
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    xml = elsewhere / "mine.xml"
    xml.write_text(_TOY_XML)
    bunch = load_file(arff, labels=xml)
    assert bunch.target_kind == "labels" and bunch.target.shape == (3, 2)
    assert list(bunch.target_names) == ["a", "b"] and bunch.data.shape == (3, 2)
    # found beside it: `toy.xml` for `toy-train-sparse.arff`
    (tmp_path / "toy.xml").write_text(_TOY_XML)
    assert load_file(arff).target_kind == "labels"
    # a label file cut before </labels> is an error naming it, not a partial list
    (tmp_path / "toy.xml").write_text(_TOY_XML[: _TOY_XML.index("</labels>")])
    with pytest.raises(ValueError, match="toy.xml"):
        load_file(arff)
    # labels= applies to ARFF files only
    svm = tmp_path / "d.svm"
    svm.write_text("1 1:0.5\n2 2:1\n")
    with pytest.raises(ValueError, match="labels"):
        load_file(svm, labels=xml)


def test_bibtex_precision_at_k_equals_the_command_lines(bibtex, tmp_path):
    gimc_bin = os.environ.get("GIMC_BIN")
    if not gimc_bin:
        pytest.skip("GIMC_BIN (the gimc command line) not set")
    data_dir = _data_dir()
    train, test = bibtex
    settings = dict(m=150, gamma=0.002, alpha=1.0, max_iter=3)
    model, pred = tmp_path / "bibtex.gimc", tmp_path / "bibtex.pred"
    common = [gimc_bin, "-q", "--data-dir", data_dir]
    subprocess.run(
        [*common, "--seed", "7", "fit", "bibtex", "--part", "train", "--method", "gimc-lff",
         "--m", "150", "--gamma", "0.002", "--lambda", "1", "--iters", "3", "-o", str(model)],
        check=True,
    )
    subprocess.run(
        [*common, "predict", "-m", str(model), "bibtex", "--part", "test", "--top-k", "5",
         "-o", str(pred)],
        check=True,
    )
    cli = json.loads(
        subprocess.run(
            [*common, "--json", "eval", str(pred), "bibtex"],
            check=True, capture_output=True, text=True,
        ).stdout
    )["metrics"]
    clf = GIMCClassifier(map="lff", random_state=7, **settings).fit(train.data, train.target)
    scores = clf.decision_function(test.data)
    for k in (1, 3, 5):
        assert precision_at_k(test.target, scores, k) == pytest.approx(cli[f"P@{k}"], abs=1e-12)
    # the same model: the CLI's file scores the test rows exactly as the estimator does
    from gimc import _gimc
    from gimc._convert import features

    assert np.array_equal(_gimc.decision_function(model.read_bytes(), features(test.data)), scores)
    assert cli["P@1"] > 0.45  # a learned map on Bibtex, well above the most frequent label's 0.16


def _printed(metrics):
    """P@1, P@3 and P@5 as `gimc eval` prints them: percent with two decimals."""
    return [f"{100 * metrics[f'P@{k}']:.2f}" for k in (1, 3, 5)]


# `gimc fit`'s default (`auto`, seed 0) against GIMCClassifier()'s (random_state defaults to
# the same seed): on Bibtex (sparse counts, one validation split) and emotions (dense,
# cross-validated). Bibtex's
# search takes the command line about 70 s as a debug build (CI's $GIMC_BIN), 40 s optimised.
@pytest.mark.parametrize("name", ["emotions", "bibtex"])
def test_auto_precision_at_k_equals_the_command_lines(name, tmp_path):
    data_dir = _data_dir(name)
    gimc_bin = os.environ.get("GIMC_BIN")
    if not gimc_bin:
        pytest.skip("GIMC_BIN (the gimc command line) not set")
    train = os.path.join(data_dir, name, f"{name}-train.arff")
    test = os.path.join(data_dir, name, f"{name}-test.arff")
    model, pred = tmp_path / f"{name}.gimc", tmp_path / f"{name}.pred"
    subprocess.run([gimc_bin, "-q", "fit", train, "-o", str(model)], check=True)
    subprocess.run(
        [gimc_bin, "-q", "predict", "-m", str(model), test, "--top-k", "5", "-o", str(pred)],
        check=True,
    )
    cli = json.loads(
        subprocess.run(
            [gimc_bin, "-q", "--json", "eval", str(pred), test],
            check=True, capture_output=True, text=True,
        ).stdout
    )["metrics"]
    Xtr, Ytr = load_file(train, return_X_y=True)
    Xte, Yte = load_file(test, return_X_y=True)
    clf = GIMCClassifier().fit(Xtr, Ytr)
    scores = clf.decision_function(Xte)
    py = {f"P@{k}": precision_at_k(Yte, scores, k) for k in (1, 3, 5)}
    assert _printed(py) == _printed(cli), (name, clf.best_params_)
    # the same model: the command line's file scores the test rows as the estimator does
    from gimc import _gimc
    from gimc._convert import features

    assert np.array_equal(_gimc.decision_function(model.read_bytes(), features(Xte)), scores)
    assert _gimc.model_info(model.read_bytes())["method"] == "gimc-auto"


def test_a_pipeline_in_grid_search_on_bibtex(bibtex):
    train, test = bibtex
    pipe = make_pipeline(
        StandardScaler(with_mean=False),  # keeps the CSR matrix sparse
        GIMCClassifier(map="rff", max_iter=0, random_state=0),
    )
    search = GridSearchCV(
        pipe,
        {"gimcclassifier__m": [50, 150], "gimcclassifier__gamma": ["0.25*scale", "scale"]},
        cv=KFold(2, shuffle=True, random_state=0),
    )
    search.fit(train.data, train.target)
    assert set(search.best_params_) == {"gimcclassifier__m", "gimcclassifier__gamma"}
    assert search.cv_results_["mean_test_score"].shape == (4,)
    best = search.best_estimator_[-1]
    assert best.multilabel_ and best.n_features_in_ == 1836
    # score is P@1 on the multi-label test rows
    p1 = search.score(test.data, test.target)
    assert p1 == pytest.approx(
        precision_at_k(test.target, search.best_estimator_.decision_function(test.data), 1)
    )
    assert p1 > 0.3
